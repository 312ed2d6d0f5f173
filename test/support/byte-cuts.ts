/**
 * `bytes` cut at `cuts` (fractions of its length, in any order, repeats allowed): the pieces a
 * network might deliver it in, for property tests of stream decoders.
 */
export function cutBytes(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => Math.floor(cut * bytes.length)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const point of points) {
    pieces.push(bytes.subarray(from, point));
    from = point;
  }
  pieces.push(bytes.subarray(from));
  return pieces;
}
