/** Linear warm-up to the peak, then cosine decay to `minimumRatio` of it at the last step. */
export interface LearningRateSchedule {
  peak: number;
  warmupSteps: number;
  totalSteps: number;
  /** Final rate as a fraction of the peak (default 0.1). */
  minimumRatio?: number;
}

export function learningRateAt(step: number, schedule: LearningRateSchedule): number {
  const { peak, warmupSteps, totalSteps } = schedule;
  const minimum = peak * (schedule.minimumRatio ?? 0.1);
  if (step < warmupSteps) return (peak * (step + 1)) / warmupSteps;
  const progress = Math.min(1, (step - warmupSteps) / Math.max(1, totalSteps - warmupSteps));
  return minimum + ((peak - minimum) * (1 + Math.cos(Math.PI * progress))) / 2;
}
