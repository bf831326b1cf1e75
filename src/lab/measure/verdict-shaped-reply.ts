/**
 * Tells a judge's verdict from an answer: what the built-in model wrote to agents' prompts when it
 * took every long prompt for a judge prompt ("The user wants plain or longer, which the reply
 * missed. \boxed{-1}"). A reply is verdict-shaped when it has the judge's phrasing (a reading of
 * "the user" and "the reply", the hint markers) or a boxed score (−1, 0, +1) that is not an
 * answer.
 *
 * A bare `\boxed{` is not enough: boxing the final answer is one of the policy's own styles
 * (`\boxed{27}`). `\boxed{0}` and `\boxed{1}` can be answers too, so they count as scores only in
 * a reply that states no answer and shows no working.
 */
import { hintEndMarker, hintStartMarker } from '../../core/judge-prompts.js';

export type VerdictSign = 'judge-phrasing' | 'boxed-score' | 'hint-markers';

const judgePhrasings: readonly RegExp[] = [
  /\bthe user (?:wants|is satisfied|thanks|says|asks for|moves on|complains|is not satisfied|accepts|rejects)\b/i,
  /\bthe reply (?:missed|worked|was accepted|has to change|did not give|helped)\b/i,
  /\bthe (?:next state|next message|follow-up|complaint)\b/i,
  /\bwhich the reply\b/i,
  /\bthere is no clear signal\b/i,
];

/** A signed score is never an answer to the corpus's word problems. */
const signedScore = /\\boxed\{\s*[+-]\s*1\s*\}/;
const plainScore = /\\boxed\{\s*[01]\s*\}/;
/** Signs of an answer around a boxed 0 or 1: the working or the answer's own words. */
const answerSigns = /\d+\s*[-+×x*/÷]\s*\d+\s*=|\banswer\b|\bresult\b|\btotal\b|\bleft\b/i;

/** What makes `text` verdict-shaped; empty for an answer. */
export function verdictSigns(text: string): VerdictSign[] {
  const signs: VerdictSign[] = [];
  if (judgePhrasings.some((pattern) => pattern.test(text))) signs.push('judge-phrasing');
  if (signedScore.test(text) || (plainScore.test(text) && !answerSigns.test(text))) signs.push('boxed-score');
  if (text.includes(hintStartMarker) || text.includes(hintEndMarker)) signs.push('hint-markers');
  return signs;
}

export function isVerdictShaped(text: string): boolean {
  return verdictSigns(text).length > 0;
}
