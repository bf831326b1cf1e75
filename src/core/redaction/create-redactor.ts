/**
 * Finds secrets and personal data in text and replaces each with a typed placeholder,
 * `[REDACTED:<kind>]`. Every detector runs over the whole text; where matches overlap, the spec's
 * own patterns win, then provider keys, then credential shapes, then credentials beside names,
 * then personal data, and one span never splits another.
 *
 * @example
 * createRedactor().redact('mail bob@corp.io').text // 'mail [REDACTED:email]'
 */
import { assignmentDetector, defaultDetectors, runStartBefore, stickyMatchBetween, type RedactionDetector } from './redaction-detectors.js';
import { defaultRedactionSpec, type RedactionSpec } from './redaction-spec.js';

/** A redacted stretch of the input: offsets in UTF-16 code units of the original text. */
export interface RedactionSpan {
  start: number;
  end: number;
  kind: string;
  /** The detector that found it (`openai-key`, `email`, `secret-assignment`, a spec pattern's id). */
  detector: string;
}

export interface RedactionResult {
  /** The text with each span replaced by `[REDACTED:<kind>]`. */
  text: string;
  /** In order of position; empty when nothing was found (then `text` is the input itself). */
  spans: RedactionSpan[];
}

export interface Redactor {
  redact(text: string): RedactionResult;
  /** The detectors that run, by id, in the order they win overlaps. */
  readonly detectorIds: readonly string[];
}

/** The placeholder a span of this kind becomes. */
export function placeholderOf(kind: string): string {
  return `[REDACTED:${kind}]`;
}

/** Texts at least this long are remembered with their redaction (shorter ones cost less to redact than to look up). */
const rememberedFrom = 64;
/** How many characters of text are remembered in all (about 16 MiB), least recently used forgotten first. */
const rememberedCharacters = 8 * 1024 * 1024;

interface RankedSpan extends RedactionSpan {
  rank: number;
}

/** Each match of a detector: at every position, or (anchored) just before each occurrence of its anchor. */
function* rawMatchesOf(detector: RedactionDetector, text: string): Generator<RegExpExecArray> {
  const { pattern, anchor } = detector;
  if (anchor !== undefined) {
    let resumeAt = 0;
    for (let at = text.indexOf(anchor.text); at !== -1; at = text.indexOf(anchor.text, Math.max(at + 1, resumeAt))) {
      const match = stickyMatchBetween(pattern, text, runStartBefore(text, at, anchor.back, anchor.maxBack, resumeAt), at);
      if (match === null) continue;
      resumeAt = match.index + Math.max(1, match[0].length);
      yield match;
    }
    return;
  }
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    if (match[0].length === 0) pattern.lastIndex += 1;
    else yield match;
  }
}

function matchesOf(detector: RedactionDetector, text: string, rank: number): RankedSpan[] {
  const spans: RankedSpan[] = [];
  for (const match of rawMatchesOf(detector, text)) {
    const range = match.indices?.[detector.group];
    const secret = match[detector.group];
    if (range === undefined || secret === undefined || secret.length === 0) continue;
    if (detector.accept !== undefined && !detector.accept(secret, text, range[0])) continue;
    spans.push({ start: range[0], end: range[1], kind: detector.kind, detector: detector.id, rank });
  }
  return spans;
}

/** Whether a detector is turned off by id or by kind. */
function disabled(spec: RedactionSpec, id: string, kind: string): boolean {
  return spec.disable.includes(id) || spec.disable.includes(kind);
}

export function createRedactor(spec: RedactionSpec = defaultRedactionSpec): Redactor {
  const custom: RedactionDetector[] = spec.patterns.map((pattern) => ({
    id: pattern.id ?? `custom-${pattern.kind}`,
    kind: pattern.kind,
    pattern: new RegExp(pattern.pattern, `dg${pattern.flags}`),
    group: pattern.group,
  }));
  const defaults = spec.detectors === 'default' ? defaultDetectors.filter((detector) => !disabled(spec, detector.id, detector.kind)) : [];
  // Credentials beside names rank after the shapes that say exactly what a value is (a provider key in `OPENAI_API_KEY=`).
  const personalFrom = defaults.findIndex((detector) => ['email', 'phone', 'card', 'iban', 'ip-address'].includes(detector.kind));
  const secretsEnd = personalFrom === -1 ? defaults.length : personalFrom;
  const ordered = [...custom, ...defaults.slice(0, secretsEnd)];
  const assignmentRank = ordered.length;
  const assignmentsOn = spec.detectors === 'default' && !disabled(spec, assignmentDetector.id, 'secret') && !disabled(spec, assignmentDetector.id, 'password');
  const afterAssignments = defaults.slice(secretsEnd);
  const allowed = new Set(spec.allow);
  const detectorIds = [...ordered.map((detector) => detector.id), ...(assignmentsOn ? [assignmentDetector.id] : []), ...afterAssignments.map((detector) => detector.id)];

  // An agent resends its whole conversation every turn (a 40 KB system prompt, every earlier
  // message): the texts seen lately are remembered, so a turn costs the redaction of its new
  // messages only. Results are never mutated by callers, so they are shared.
  const recent = new Map<string, RedactionResult>();
  let recentCharacters = 0;

  function redact(text: string): RedactionResult {
    if (text.length < rememberedFrom) return redactNow(text);
    const remembered = recent.get(text);
    if (remembered !== undefined) {
      recent.delete(text);
      recent.set(text, remembered);
      return remembered;
    }
    const result = redactNow(text);
    recent.set(text, result);
    recentCharacters += text.length;
    for (const oldest of recent.keys()) {
      if (recentCharacters <= rememberedCharacters) break;
      recent.delete(oldest);
      recentCharacters -= oldest.length;
    }
    return result;
  }

  function redactNow(text: string): RedactionResult {
    if (text.length === 0) return { text, spans: [] };
    const candidates: RankedSpan[] = [];
    ordered.forEach((detector, rank) => candidates.push(...matchesOf(detector, text, rank)));
    if (assignmentsOn) candidates.push(...assignmentDetector.find(text).map((span) => ({ ...span, rank: assignmentRank })));
    afterAssignments.forEach((detector, index) => candidates.push(...matchesOf(detector, text, assignmentRank + 1 + index)));
    if (candidates.length === 0) return { text, spans: [] };
    candidates.sort((left, right) => left.rank - right.rank || left.start - right.start || right.end - left.end);
    const kept: RedactionSpan[] = [];
    for (const candidate of candidates) {
      if (allowed.has(text.slice(candidate.start, candidate.end))) continue;
      if (kept.some((span) => candidate.start < span.end && span.start < candidate.end)) continue;
      kept.push({ start: candidate.start, end: candidate.end, kind: candidate.kind, detector: candidate.detector });
    }
    if (kept.length === 0) return { text, spans: [] };
    kept.sort((left, right) => left.start - right.start);
    let output = '';
    let cursor = 0;
    for (const span of kept) {
      output += text.slice(cursor, span.start) + placeholderOf(span.kind);
      cursor = span.end;
    }
    return { text: output + text.slice(cursor), spans: kept };
  }

  return { redact, detectorIds };
}
