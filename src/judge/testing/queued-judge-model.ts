/** A judge model for tests: answers verdict prompts and hint prompts from two queues, recording every request. */
import { hintSystemPrompt } from '../../core/judge-prompts.js';
import type { JudgeModel, JudgeModelRequest } from '../judge-model.js';

export function queuedJudgeModel(verdicts: string[], hints: string[] = []): JudgeModel & { requests: JudgeModelRequest[] } {
  const requests: JudgeModelRequest[] = [];
  return Object.assign(
    async (request: JudgeModelRequest) => {
      requests.push(request);
      const queue = request.messages[0]?.content === hintSystemPrompt ? hints : verdicts;
      return Array.from({ length: request.n }, () => queue.shift() ?? '');
    },
    { requests },
  );
}
