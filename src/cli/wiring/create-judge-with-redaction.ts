/**
 * The judge `--judge` names, its output redacted by the `--redact` rules (`off`: as it is), for
 * the judge worker and `clawrl rejudge` alike.
 */
import { createRedactor } from '../../core/redaction/create-redactor.js';
import { createRedactingJudge } from '../../judge/create-redacting-judge.js';
import type { InferenceEngine } from '../../spec/inference-engine.js';
import type { Judge } from '../../spec/judge.js';
import { loadRedactionSpec } from '../configuration/load-redaction-spec.js';
import { createJudge, type JudgeConfiguration } from './create-judge.js';

export function createJudgeWithRedaction(configuration: JudgeConfiguration & { redact: string }, engine: InferenceEngine | undefined): Judge {
  const spec = loadRedactionSpec(configuration.redact);
  const judge = createJudge(configuration, engine);
  return spec === null ? judge : createRedactingJudge(judge, createRedactor(spec));
}
