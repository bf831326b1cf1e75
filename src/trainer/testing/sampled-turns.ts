/** Turns with a ready sample each, as the trainer's tests record them. */
import type { RecordStore } from '../../spec/record-store.js';

export type SampleFields = Pick<Parameters<RecordStore['recordSample']>[0], 'method' | 'policyVersion' | 'score' | 'hint' | 'distillationGaps' | 'teacherLogprobs'> &
  Partial<Pick<Parameters<RecordStore['recordSample']>[0], 'support' | 'feedbackId' | 'group'>>;

/** A completed two-token main turn of session `s` and its ready sample. */
export async function recordSampledTurn(target: RecordStore, index: number, sample: SampleFields, temperature = 0.8): Promise<void> {
  const id = `turn-${index}`;
  await target.recordTurn({
    id, sessionId: 's', type: 'main', status: 'completed', trainable: true, tenant: null, user: null, model: 'tiny', policyVersion: sample.policyVersion,
    messages: [{ role: 'user', content: 'q' }], tools: [], sampling: { temperature, topP: 1, stop: [], n: 1, topLogprobs: 0 },
    promptTokenIds: [3, 14, 15, 92], responseTokenIds: [65, 35], logprobs: [-4, -4.5], response: { role: 'assistant', content: 'a' },
    finishReason: 'stop', timings: { startedAt: 1, firstTokenAt: 2, endedAt: 3 }, error: null, replyKey: null,
  });
  await target.recordSample({
    id: `sample-${index}`, turnId: id, status: 'ready', dropReason: null, judgementId: null, feedbackId: null,
    group: null, lossMask: [1, 1], support: null, createdAt: 10 + index, ...sample,
  });
}

