/**
 * The single-use discipline every built-in environment keeps: the initial observation once and
 * first, no action after done, close any number of times.
 */
import { ClawrlError } from '../../spec/clawrl-error.js';

export interface SingleUseGuard {
  observe(): void;
  act(): void;
  finish(): void;
  readonly done: boolean;
}

export function createSingleUseGuard(name: string): SingleUseGuard {
  let observed = false;
  let done = false;
  return {
    observe() {
      if (observed) throw new ClawrlError('invalid_request', `The ${name} environment is single-use: its initial observation was already taken.`);
      observed = true;
    },
    act() {
      if (!observed) throw new ClawrlError('invalid_request', `Take the ${name} environment's initial observation before acting.`);
      if (done) throw new ClawrlError('invalid_request', `The ${name} episode is done; create a new environment for another rollout.`);
    },
    finish() {
      done = true;
    },
    get done() {
      return done;
    },
  };
}
