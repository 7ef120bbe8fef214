export { checkOutputOptions, OUTPUT_STREAMS, type OutputChunk, type OutputOptions, type OutputRequest, type OutputStream } from "./request.ts";
export { followOutput, type FollowOptions } from "./follow.ts";
export { readChunks } from "./read-chunk.ts";
export { readDropped, streamFiles } from "./dropped.ts";
export { offsetOfKeptLines, offsetOfLastLines, startOfLastLines } from "./last-lines.ts";
export { LinePrefixer } from "./prefix-lines.ts";
export { MIN_OUTPUT_BYTES, TRIM_SCRIPT } from "./trim-loop.ts";
export { trustedPart } from "./split.ts";
