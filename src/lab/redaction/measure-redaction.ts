/**
 * Measures a redactor on the labelled corpus: recall (planted secrets wholly covered by redacted
 * spans), false positives (look-alikes any redacted span touches), whether each found secret got
 * the kind it should, and redactions that touch nothing planted (the filler text is written to
 * hold none, so each is a false positive too). `clawrl eval redaction` prints it.
 */
import type { Redactor } from '../../core/redaction/create-redactor.js';
import type { CorpusDocument } from './redaction-corpus.js';

export interface SourceTally {
  total: number;
  /** Secrets: wholly redacted; look-alikes: touched. */
  hit: number;
}

export interface RedactionMeasurement {
  documents: number;
  secrets: number;
  found: number;
  /** found / secrets. */
  recall: number;
  /** Found secrets whose span's kind is the one planted. */
  kindAgreement: number;
  lookAlikes: number;
  touched: number;
  /** touched / lookAlikes. */
  falsePositiveRate: number;
  /** Redacted spans that overlap no planted value. */
  strayRedactions: number;
  bySource: Record<string, SourceTally>;
  /** Up to 20 secrets missed and look-alikes touched, with the document shape, to read. */
  errors: Array<{ shape: string; source: string; secret: boolean; value: string }>;
}

export function measureRedaction(redactor: Redactor, corpus: readonly CorpusDocument[]): RedactionMeasurement {
  const measurement: RedactionMeasurement = { documents: corpus.length, secrets: 0, found: 0, recall: 0, kindAgreement: 0, lookAlikes: 0, touched: 0, falsePositiveRate: 0, strayRedactions: 0, bySource: {}, errors: [] };
  let kindsAgreeing = 0;
  for (const document of corpus) {
    const { spans } = redactor.redact(document.text);
    for (const label of document.labels) {
      const overlapping = spans.filter((span) => span.start < label.end && label.start < span.end);
      const tally = (measurement.bySource[label.source] ??= { total: 0, hit: 0 });
      tally.total += 1;
      let hit: boolean;
      if (label.secret) {
        measurement.secrets += 1;
        // Wholly covered: every character of the secret lies in some span.
        let covered = label.start;
        for (const span of [...overlapping].sort((left, right) => left.start - right.start)) if (span.start <= covered) covered = Math.max(covered, span.end);
        hit = covered >= label.end;
        if (hit) {
          measurement.found += 1;
          if (overlapping.every((span) => span.kind === label.kind)) kindsAgreeing += 1;
        }
      } else {
        measurement.lookAlikes += 1;
        hit = overlapping.length > 0;
        if (hit) measurement.touched += 1;
      }
      if (hit) tally.hit += 1;
      if (hit !== label.secret && measurement.errors.length < 20) {
        measurement.errors.push({ shape: document.shape, source: label.source, secret: label.secret, value: document.text.slice(label.start, label.end) });
      }
    }
    measurement.strayRedactions += spans.filter((span) => !document.labels.some((label) => span.start < label.end && label.start < span.end)).length;
  }
  measurement.recall = measurement.secrets === 0 ? 1 : measurement.found / measurement.secrets;
  measurement.kindAgreement = measurement.found === 0 ? 1 : kindsAgreeing / measurement.found;
  measurement.falsePositiveRate = measurement.lookAlikes === 0 ? 0 : measurement.touched / measurement.lookAlikes;
  return measurement;
}

/** The figures as text. */
export function formatRedactionMeasurement(measurement: RedactionMeasurement): string {
  const percent = (value: number) => `${(value * 100).toFixed(2)}%`;
  const lines = [
    `documents ${measurement.documents}`,
    `recall ${percent(measurement.recall)} (${measurement.found}/${measurement.secrets} secrets wholly redacted; kind as planted: ${percent(measurement.kindAgreement)})`,
    `false positives ${percent(measurement.falsePositiveRate)} (${measurement.touched}/${measurement.lookAlikes} look-alikes touched; ${measurement.strayRedactions} redactions outside anything planted)`,
    'by source (hit/total):',
    ...Object.entries(measurement.bySource).map(([source, tally]) => `  ${source} ${tally.hit}/${tally.total}`),
  ];
  for (const error of measurement.errors) lines.push(`  ${error.secret ? 'missed' : 'touched'} ${error.source} in ${error.shape}: ${JSON.stringify(error.value)}`);
  return lines.join('\n');
}
