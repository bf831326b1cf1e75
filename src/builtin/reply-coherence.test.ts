import { describe, expect, it } from 'vitest';
import { contentWordsOf, replyIncoherence } from './reply-coherence.js';

const message = "I'm a teacher. Please comment on Naomi's homework.\nProblem: Gustav has 36 oranges. Gustav gets 30 more. How many oranges does Gustav have now?\nNaomi's answer: 36 - 30 = 6.";
const stop = (text: string) => ({ text, finishReason: 'stop' });

describe('replyIncoherence', () => {
  it('passes replies of the untrained built-in model, wrong names and sums included', () => {
    // Replies the shipped model gave in the experiment's probes (docs/personalization.md).
    expect(replyIncoherence(stop('Well done! Naomi, your answer of 6 is not quite right. 36 + 30 = 66, so check the operation.'), message)).toBeNull();
    expect(replyIncoherence(stop('Excellent! Alice has **36** and Liam has **3**. The difference is 36 - 3 = **33**.'), message)).toBeNull();
    expect(replyIncoherence({ text: 'Nice work, Gustav', finishReason: null }, message)).toBeNull();
  });

  it('finds the collapses that satisfied the simulated users by their style alone', () => {
    expect(replyIncoherence({ text: 'Well done! Naomi, your answer', finishReason: 'length' }, message)).toBe('cut-off');
    expect(replyIncoherence(stop('Nice,,,,,,,,,,,,,,,,,,,,,,,,,, 11 of, 13 of'), message)).toBe('repetition');
    expect(replyIncoherence(stop('11111111111111111111111111111111'), message)).toBe('repetition');
    expect(replyIncoherence(stop('Fantastic! Naomi, your answer of 6 is not quite right right right right.'), message)).toBe('repetition');
    expect(replyIncoherence(stop(' 10 and 10 of the reply 10 so 10 + 10 and 10 of 10.'), message)).toBe('off-task');
    expect(replyIncoherence(stop('Excellent wonderful effort!'), message)).toBe('off-task');
  });

  it('leaves rule lines alone and does not ask an empty message for a topic', () => {
    expect(replyIncoherence(stop('Naomi\n----------\n36 + 30 = 66'), message)).toBeNull();
    expect(replyIncoherence(stop('Anything at all.'), 'Hi!')).toBeNull();
  });
});

describe('contentWordsOf', () => {
  it('keeps numbers and words of four letters or more, common words left out', () => {
    expect([...contentWordsOf('Tom has 12 apples. What would you like?')].sort()).toEqual(['12', 'apples']);
  });
});
