// Order statistics over repeated samples. Nearest-rank percentiles: every figure reported is one
// that was actually measured.

/** @param {number[]} sorted ascending @param {number} p in (0, 100] */
function nearestRank(sorted, p) {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/**
 * @param {number[]} samples
 * @returns {{n: number, min: number, p50: number, p90: number, max: number} | null}
 */
export function summarize(samples) {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (x) => Math.round(x * 10) / 10;
  return {
    n: sorted.length,
    min: round(sorted[0]),
    p50: round(nearestRank(sorted, 50)),
    p90: round(nearestRank(sorted, 90)),
    max: round(sorted[sorted.length - 1]),
  };
}
