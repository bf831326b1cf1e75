/** Which policy version one engine of a process serves, for `/admin/status`. */
import type { PolicyVersion } from './inference-engine.js';

export interface PolicyServingStatus {
  /** The part of the process whose engine it is: the gateway's, or the judge's own. */
  role: 'gateway' | 'judge';
  /** The engine's id (`vllm`, `sglang`, `local`, ...). */
  engine: string;
  /** The version new requests get. */
  servedVersion: PolicyVersion;
  /** A version the engine could not load yet: the previous one is served while it is retried. */
  pending: {
    version: PolicyVersion;
    attempts: number;
    error: string;
    /** Epoch milliseconds of the next attempt; null when it is not retried (the engine cannot ever load it). */
    retryAt: number | null;
  } | null;
}
