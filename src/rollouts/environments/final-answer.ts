/**
 * Reads the final answer out of an assistant's reply, as a grader would: an explicit `\boxed{…}`
 * wins, then the last "the answer is …" / "Answer: …" statement, then the last number in the
 * text. The order matters because replies often check their result afterwards ("To check,
 * 7 + 9 = 16"): a stated answer must beat numbers that merely appear later.
 */

const numberPattern = String.raw`-?\d+(?:,\d{3})*(?:\.\d+)?`;
const boxed = new RegExp(String.raw`\\boxed\{\s*\**\s*(${numberPattern})\s*\**\s*\}`, 'g');
const stated = new RegExp(String.raw`(?:answer\s*(?:is|:|=)|answer\s+is\s*:?)\s*\**\s*(${numberPattern})`, 'gi');
const anyNumber = new RegExp(numberPattern, 'g');

function lastMatch(text: string, pattern: RegExp, group: number): string | null {
  let last: string | null = null;
  for (const match of text.matchAll(pattern)) last = match[group] ?? null;
  return last;
}

function toNumber(text: string | null): number | null {
  if (text === null) return null;
  const value = Number(text.replaceAll(',', ''));
  return Number.isFinite(value) ? value : null;
}

/** The number the reply gives as its answer, or null when it gives none. */
export function finalNumericAnswer(text: string): number | null {
  return toNumber(lastMatch(text, boxed, 1) ?? lastMatch(text, stated, 1) ?? lastMatch(text, anyNumber, 0));
}

/** The last non-empty line of a reply, trimmed of markdown emphasis and a trailing full stop: a short textual answer. */
export function finalTextAnswer(text: string): string | null {
  const boxedText = /\\boxed\{([^}]*)\}/g;
  const fromBox = lastMatch(text, boxedText, 1);
  const line = fromBox ?? text.split('\n').map((part) => part.trim()).filter((part) => part !== '').at(-1) ?? null;
  if (line === null) return null;
  const answer = line.replace(/^(?:the\s+)?answer\s*(?:is|:)\s*/i, '').replaceAll(/[*`"']/g, '').replace(/\.$/, '').trim();
  return answer === '' ? null : answer;
}
