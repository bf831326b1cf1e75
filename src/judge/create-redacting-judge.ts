/**
 * A judge whose output is redacted: each vote's text and hint, the hint candidates and the chosen
 * hint. The judge reads turns that were redacted before they were kept, so its output holds a
 * secret only if its model made one up or echoed one it was shown; redacting here keeps such text
 * out of the stored judgement and out of the OPD teacher prompt the hint goes into.
 */
import type { Redactor } from '../core/redaction/create-redactor.js';
import type { Judge, JudgeResult } from '../spec/judge.js';

export function redactJudgeResult(redactor: Redactor, result: JudgeResult): JudgeResult {
  const text = (value: string): string => redactor.redact(value).text;
  return {
    ...result,
    votes: result.votes.map((vote) => ({ ...vote, text: text(vote.text), hint: vote.hint === null ? null : text(vote.hint) })),
    hint: result.hint === null ? null : text(result.hint),
    hintCandidates: result.hintCandidates.map(text),
  };
}

export function createRedactingJudge(judge: Judge, redactor: Redactor): Judge {
  return {
    judgeId: judge.judgeId,
    judgeModel: judge.judgeModel,
    promptVersion: judge.promptVersion,
    judge: async (input, signal) => redactJudgeResult(redactor, await judge.judge(input, signal)),
  };
}
