/**
 * Why both record stores refuse a training step's commit when a sample it trained on is no longer
 * there to be marked trained: erased while the step ran (another process's `clawrl data delete`,
 * `--retain-days`), superseded by the sample a later judgement or feedback of its turn built, or
 * taken by another trainer after this one's lease ran out. Recording the
 * version anyway would leave a version whose lineage misses a sample it learnt from, so an
 * erasure could never reach it; refused, the trainer restores its weights and trains again on the
 * samples that remain. Marked retryable: the trainer's step on demand trains again at once.
 */
import { ClawrlError } from '../spec/clawrl-error.js';

export function samplesGoneError(step: number, missing: number): ClawrlError {
  return new ClawrlError(
    'store_error',
    `training step ${step} is not recorded: ${missing} of its samples are no longer ready to be marked trained (erased or superseded while it ran, or leased by another trainer); it trains again on what remains`,
    { retryable: true },
  );
}
