/** Tick labels of the dashboard's charts (`line-chart.tsx`). */
import type uPlot from 'uplot';

/**
 * How an axis labels its ticks: `integer` for counts (versions, steps, sessions), which uPlot
 * would otherwise split at 0.5; `exponential` for small rates (a learning rate as 1e-3, not 0.001
 * repeated when rounded).
 */
export type TickFormat = 'integer' | 'exponential';

/** Tick spacings of 1, 2 and 5 times a power of ten: whole numbers only. */
export const integerIncrements = Array.from({ length: 10 }, (_, power) => [1, 2, 5].map((factor) => factor * 10 ** power)).flat();

export function exponentialTick(value: number): string {
  return value === 0 ? '0' : Number(value.toPrecision(2)).toExponential();
}

export function axisTicks(format: TickFormat | undefined): Partial<uPlot.Axis> {
  if (format === 'integer') return { incrs: integerIncrements, values: (_plot, splits) => splits.map((split) => String(split)) };
  // Wider than uPlot's default 50 px: `1.5e-3` is longer than the labels it sizes for.
  if (format === 'exponential') return { values: (_plot, splits) => splits.map(exponentialTick), size: 64 };
  return {};
}
