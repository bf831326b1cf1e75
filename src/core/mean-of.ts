/** The mean of `values`; null when there are none (no score is not a score of 0). */
export function meanOf(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;
}
