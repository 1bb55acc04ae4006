/**
 * A small seeded generator (mulberry32) for the property tests that draw
 * their own values, so that a failure repeats: `random(seed)()` gives the
 * next number in [0, 1).
 */
export const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
