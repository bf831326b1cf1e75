/**
 * Reading the judge's answers: one vote per sample, the hint of a hint-extraction answer, and the
 * choice among several candidate hints. Unreadable answers are expected (a judge at temperature
 * 0.6 rambles) and come back as data, never as exceptions. Votes become a reward in one place,
 * `core/rl/aggregate-votes.ts`.
 */
import { hintEndMarker, hintStartMarker } from './judge-prompts.js';
import type { ParsedVote } from './rl/aggregate-votes.js';

const boxedNumberPattern = /\\boxed\{\s*([+-]?\d+)\s*\}/g;

function lastBoxedNumber(text: string): number | null {
  let last: number | null = null;
  for (const match of text.matchAll(boxedNumberPattern)) last = Number(match[1]);
  return last;
}

/** The last `\boxed{n}` decides; anything but 1, −1 or 0 there (or no box) is unparseable. */
export function parseVote(text: string): ParsedVote {
  const value = lastBoxedNumber(text);
  // `\boxed{-0}` parses to −0, which is normalised to 0.
  if (value === 1 || value === -1 || value === 0) return { score: value === 0 ? 0 : value };
  return { score: null, reason: 'unparseable' };
}

export const minimumHintChars = 10;
export const maximumHintChars = 600;

export type HintRejection = 'unparseable-vote' | 'negative-vote' | 'missing-hint' | 'hint-too-short' | 'hint-too-long';

export type ParsedHintResponse =
  | { accepted: true; hint: string; reason: 'accepted' }
  | { accepted: false; hint: null; reason: HintRejection };

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const hintBlockPattern = new RegExp(`${escapeRegex(hintStartMarker)}([\\s\\S]*?)${escapeRegex(hintEndMarker)}`, 'g');

/**
 * Reads a hint-extraction answer: `\boxed{1}` plus a hint between the markers is accepted when
 * the hint has 10 to 600 characters (trimmed). The vote is read outside the hint blocks, so a
 * hint that mentions `\boxed{12}` does not change it; with several blocks the last one counts.
 * The upper bound keeps a rambling judge from bloating every OPD teacher prompt.
 */
export function parseHintResponse(text: string): ParsedHintResponse {
  const outside = text.replace(hintBlockPattern, ' ');
  const vote = lastBoxedNumber(outside);
  if (vote === -1) return { accepted: false, hint: null, reason: 'negative-vote' };
  if (vote !== 1) return { accepted: false, hint: null, reason: 'unparseable-vote' };
  let hint: string | null = null;
  for (const match of text.matchAll(hintBlockPattern)) hint = (match[1] ?? '').trim();
  if (hint === null) return { accepted: false, hint: null, reason: 'missing-hint' };
  if (hint.length < minimumHintChars) return { accepted: false, hint: null, reason: 'hint-too-short' };
  if (hint.length > maximumHintChars) return { accepted: false, hint: null, reason: 'hint-too-long' };
  return { accepted: true, hint, reason: 'accepted' };
}

export interface SelectedHint {
  hint: string;
  index: number;
  method: 'overlap' | 'longest';
}

/**
 * Indexes of the candidates whose text most votes gave, when some text repeats; every index
 * otherwise. Votes that agree word for word are self-consistent, so a repeated hint is more likely
 * right than any single vote (the built-in judge words its hints canonically, so agreeing votes
 * repeat exactly). A larger judge's free-form hints rarely repeat, which leaves every candidate in.
 */
export function agreedHintIndexes(candidates: readonly string[]): number[] {
  const counts = new Map<string, number>();
  for (const candidate of candidates) counts.set(candidate.trim(), (counts.get(candidate.trim()) ?? 0) + 1);
  const top = Math.max(0, ...counts.values());
  const indexes = candidates.map((_, index) => index);
  return top < 2 ? indexes : indexes.filter((index) => counts.get((candidates[index] as string).trim()) === top);
}

/**
 * Picks one of several accepted hints. Candidates are first narrowed to the text most votes agree
 * on (`agreedHintIndexes`). Among those, with one finite overlap score per candidate (the v2
 * "overlap-guided" selection: the summed top-k overlap between the student and the
 * hint-conditioned teacher), the highest score wins; otherwise, or when the scores do not line up
 * with the candidates, the longest hint wins (OpenClaw-RL v1). Ties go to the longer hint, then
 * the earlier one. No candidates gives null.
 */
export function selectHint(candidates: readonly string[], overlapScores?: readonly number[]): SelectedHint | null {
  const agreed = agreedHintIndexes(candidates);
  if (agreed.length === 0) return null;
  const useOverlap =
    overlapScores !== undefined &&
    overlapScores.length === candidates.length &&
    overlapScores.every((score) => Number.isFinite(score));
  let best = agreed[0] as number;
  for (const index of agreed.slice(1)) {
    const length = (candidates[index] as string).length;
    const bestLength = (candidates[best] as string).length;
    if (useOverlap) {
      const score = overlapScores[index] as number;
      const bestScore = overlapScores[best] as number;
      if (score > bestScore || (score === bestScore && length > bestLength)) best = index;
    } else if (length > bestLength) {
      best = index;
    }
  }
  return { hint: candidates[best] as string, index: best, method: useOverlap ? 'overlap' : 'longest' };
}
