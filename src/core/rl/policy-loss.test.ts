import { describe, expect, it } from 'vitest';
import { defaultPolicyLossOptions, partitionByStaleness, policyLoss, stalenessOf, supportLossTerm } from './policy-loss.js';

const ln = Math.log;

describe('policyLoss against a hand-computed example (ε_lo 0.2, ε_hi 0.28, C 2, β 0)', () => {
  // Token by token (ρ = exp(ℓ − ℓ_old), IS = exp(ℓ_old − μ), w = min(IS, 2)):
  //  a: ρ 1,   IS 0.5/0.25 = 2 → w 2,            A +1: max(−1, −1) = −1           → pg −2
  //  b: ρ 1.5, IS 0.4/0.1 = 4 → w 2 (truncated), A +1: max(−1.5, −1.28) = −1.28 → pg −2.56 (clipped)
  //  c: masked out, whatever its values
  //  d: ρ 0.6, IS 1 → w 1,                        A −1: max(0.6, 0.8) = 0.8      → pg 0.8 (clipped)
  //  e: ρ 1,   IS 0.5/1 → w 0.5,                  A −1: max(1, 1) = 1            → pg 0.5
  // L = (−2 − 2.56 + 0.8 + 0.5) / 4 loss tokens = −0.815
  const sequences = [
    {
      logprobs: [ln(0.5), ln(0.6), ln(0.9)],
      proximalLogprobs: [ln(0.5), ln(0.4), ln(0.1)],
      rolloutLogprobs: [ln(0.25), ln(0.1), ln(0.001)],
      advantages: [1, 1, 50],
      lossMask: [1, 1, 0],
    },
    {
      logprobs: [ln(0.3), ln(0.5)],
      proximalLogprobs: [ln(0.5), ln(0.5)],
      rolloutLogprobs: [ln(0.5), 0],
      advantages: [-1, -1],
      lossMask: [1, 1],
    },
  ];

  it('aggregates token-level over the whole batch, with the truncated importance weight and asymmetric clip', () => {
    const result = policyLoss(sequences, defaultPolicyLossOptions);
    expect(result.lossTokens).toBe(4);
    expect(result.loss).toBeCloseTo(-0.815, 12);
    expect(result.policyGradientLoss).toBeCloseTo(-0.815, 12);
    expect(result.kl).toBeNull();
    expect(result.clipFraction).toBe(0.5);
    expect(result.importanceRatio.mean).toBeCloseTo(1.875, 12);
    expect(result.importanceRatio.min).toBeCloseTo(0.5, 12);
    expect(result.importanceRatio.max).toBeCloseTo(4, 12);
    expect(result.importanceRatio.truncatedFraction).toBe(0.25);
    // |ℓ_old − μ|: ln 2, ln 4, 0, ln 2 → mean ln 2.
    expect(result.rolloutLogprobAbsoluteDifference).toBeCloseTo(ln(2), 12);
  });

  it('with one optimizer step per batch (no proximal log-probs) the ratio is 1 and nothing is clipped', () => {
    const onPolicy = policyLoss([{ logprobs: [ln(0.5), ln(0.2)], rolloutLogprobs: [ln(0.5), ln(0.4)], advantages: [1, 1], lossMask: [1, 1] }]);
    // w = 1 and 0.5: L = −(1 + 0.5) / 2.
    expect(onPolicy.loss).toBeCloseTo(-0.75, 12);
    expect(onPolicy.clipFraction).toBe(0);
  });

  it('adds β times the k3 KL to the base model', () => {
    // ℓ_ref − ℓ = ln 0.25 − ln 0.5 = −ln 2: kl = 0.5 + ln 2 − 1; A = 0 so pg = 0.
    const result = policyLoss(
      [{ logprobs: [ln(0.5)], rolloutLogprobs: [ln(0.5)], advantages: [0], lossMask: [1], referenceLogprobs: [ln(0.25)] }],
      { ...defaultPolicyLossOptions, klCoefficient: 0.1 },
    );
    expect(result.kl).toBeCloseTo(ln(2) - 0.5, 12);
    expect(result.loss).toBeCloseTo(0.1 * (ln(2) - 0.5), 12);
  });

  it('adds α times the anchor KL over the loss tokens, and needs it for every token when α > 0', () => {
    // an = 0.2 and 0.4 on the two loss tokens (the third is masked): mean 0.3; A = 0 so pg = 0.
    const sequence = { logprobs: [-1, -1, -1], rolloutLogprobs: [-1, -1, -1], advantages: [0, 0, 0], lossMask: [1, 0, 1], anchorKl: [0.2, 9, 0.4] };
    const result = policyLoss([sequence], { ...defaultPolicyLossOptions, anchorCoefficient: 0.5 });
    expect(result.anchorKl).toBeCloseTo(0.3, 12);
    expect(result.loss).toBeCloseTo(0.15, 12);
    expect(policyLoss([sequence], defaultPolicyLossOptions).anchorKl).toBeNull();
    expect(() => policyLoss([{ ...sequence, anchorKl: [0.2] }], { ...defaultPolicyLossOptions, anchorCoefficient: 0.5 })).toThrow(RangeError);
  });

  it('is 0 for a batch without loss tokens and rejects misaligned arrays', () => {
    expect(policyLoss([{ logprobs: [-1], rolloutLogprobs: [-1], advantages: [1], lossMask: [0] }]).loss).toBe(0);
    expect(() => policyLoss([{ logprobs: [-1, -2], rolloutLogprobs: [-1], advantages: [1, 1], lossMask: [1, 1] }])).toThrow(RangeError);
  });
});

describe('the OPD support-set term', () => {
  it('adds the clipped surrogate of every support token, without an importance weight, under the position\'s mask', () => {
    // Support tokens: ρ 1 with A 0.5 → −0.5; ρ 2 with A 0.25 → max(−0.5, −0.32) = −0.32 (clipped); ρ 0.5 with A −1 → max(0.5, 0.8) = 0.8.
    const terms = { advantages: [0.5, 0.25, -1], logprobs: [ln(0.2), ln(0.4), ln(0.05)], proximalLogprobs: [ln(0.2), ln(0.2), ln(0.1)] };
    expect(supportLossTerm(terms, defaultPolicyLossOptions)).toBeCloseTo(-0.5 - 0.32 + 0.8, 12);
    // The sampled token: w = min(0.5/0.25, 2) = 2, A 0 → 0; the masked position's support is left out.
    const result = policyLoss([
      {
        logprobs: [ln(0.5), ln(0.5)],
        rolloutLogprobs: [ln(0.25), ln(0.25)],
        advantages: [0, 0],
        lossMask: [1, 0],
        support: [terms, { advantages: [100], logprobs: [ln(0.5)] }],
      },
    ]);
    expect(result.loss).toBeCloseTo(-0.02, 12);
    expect(result.lossTokens).toBe(1);
    expect(() => policyLoss([{ logprobs: [-1], rolloutLogprobs: [-1], advantages: [1], lossMask: [1], support: [] }])).toThrow(RangeError);
  });
});

describe('the staleness rule', () => {
  it('keeps samples at most maxStaleness versions behind the newest version and drops the rest', () => {
    const samples = [5, 4, 3, 2, 0].map((policyVersion, index) => ({ id: `s${index}`, policyVersion }));
    const { fresh, stale } = partitionByStaleness(samples, 5, 2);
    expect(fresh.map((sample) => sample.policyVersion)).toEqual([5, 4, 3]);
    expect(stale.map((sample) => sample.policyVersion)).toEqual([2, 0]);
    expect(stalenessOf(7, 5)).toBe(0);
  });
});
