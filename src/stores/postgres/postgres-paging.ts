/** Validation of list paging, the same rule for every listing of the Postgres store. */
import { ClawrlError } from '../../spec/clawrl-error.js';

export function checkPaging(limit: number, offset: number): void {
  for (const [name, value] of [['limit', limit], ['offset', offset]] as const) {
    if (!Number.isInteger(value) || value < 0) {
      throw new ClawrlError('invalid_request', `${name} must be a non-negative integer, got ${value}`, { param: name });
    }
  }
}
