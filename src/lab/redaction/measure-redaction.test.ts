import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../core/redaction/create-redactor.js';
import { redactionSpecSchema } from '../../core/redaction/redaction-spec.js';
import { measureRedaction } from './measure-redaction.js';
import { generateRedactionCorpus } from './redaction-corpus.js';

describe('the redaction corpus and its measure', () => {
  it('replays from its seed and labels spans that hold what was planted', () => {
    const corpus = generateRedactionCorpus(20, 7);
    expect(generateRedactionCorpus(20, 7)).toEqual(corpus);
    expect(new Set(corpus.map((document) => document.shape)).size).toBe(11);
    for (const document of corpus) {
      for (const label of document.labels) expect(document.text.slice(label.start, label.end).length).toBe(label.end - label.start);
    }
  });

  it('meets the acceptance figures with the default detectors: recall ≥ 99%, false positives ≤ 2%', () => {
    const measurement = measureRedaction(createRedactor(), generateRedactionCorpus(500));
    expect(measurement.errors.slice(0, 40)).toEqual([]);
    expect(measurement.recall).toBeGreaterThanOrEqual(0.99);
    expect(measurement.falsePositiveRate).toBeLessThanOrEqual(0.02);
  });

  it('counts a disabled detector as misses, so the measure can fail', () => {
    const measurement = measureRedaction(createRedactor(redactionSpecSchema.parse({ disable: ['email'] })), generateRedactionCorpus(50));
    expect(measurement.recall).toBeLessThan(0.9);
    expect(measurement.bySource.email?.hit).toBe(0);
  });
});
