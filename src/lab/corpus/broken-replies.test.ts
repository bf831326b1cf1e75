import { describe, expect, it } from 'vitest';
import { parseHintResponse, parseVote } from '../../core/judge-votes.js';
import { incoherenceComplaints, replyIncoherence } from '../../builtin/reply-coherence.js';
import { createSeededRandom } from '../../core/seeded-random.js';
import { breakReply, composeBrokenReplyComplaint, replyBreakages } from './broken-replies.js';
import { generateJudgeExample } from './judge-task.js';

const reply = 'The question asks how many apples Mia has. She starts with 12 and buys 5 more, so 12 + 5 = 17. She has 17 apples.';
const other = 'Tom shares 20 sweets among 4 friends, so each friend gets 5 sweets.';

describe('broken replies', () => {
  it('are broken the way a training policy breaks: looping, cut short, or about something else', () => {
    const random = createSeededRandom('broken');
    const message = 'Mia has 12 apples and buys 5 more. How many apples does Mia have now?';
    let wordLoops = 0;
    for (let index = 0; index < 200; index += 1) {
      const looping = breakReply(random, reply, other, 'repetition');
      // A word or a short phrase, four times or more at the end.
      expect(looping).toMatch(/(\S+(?: \S+){0,2})(?: \1){3,}$/);
      if (replyIncoherence({ text: looping, finishReason: 'stop' }, message) === 'repetition') wordLoops += 1;
      expect(reply.startsWith(breakReply(random, reply, other, 'cut-off'))).toBe(true);
      expect(breakReply(random, reply, other, 'off-task')).not.toContain('Mia');
    }
    // Most loop on one word, as the simulated users' check sees it.
    expect(wordLoops).toBeGreaterThan(120);
  });

  it('are complained about in words apart from the simulated users, so the experiment meets its judge unseen', () => {
    const random = createSeededRandom('complaints');
    const users = new Set(Object.values(incoherenceComplaints).flat());
    for (let index = 0; index < 3000; index += 1) {
      const complaint = composeBrokenReplyComplaint(random, replyBreakages[index % replyBreakages.length]!);
      expect(users.has(complaint)).toBe(false);
      expect(complaint).toMatch(/^[A-Z].*[.!?]$/);
    }
  });

  it('make judge examples scored -1 with no hint, in the training split only', () => {
    const random = createSeededRandom('judge');
    for (const prompt of ['verdict', 'hint'] as const) {
      const example = generateJudgeExample(random, { split: 'train', prompt, nextKind: 'broken' });
      const answer = example.messages[2]?.content ?? '';
      expect(example.expectedScore).toBe(-1);
      expect(example.breakage).not.toBeNull();
      if (prompt === 'verdict') expect(parseVote(answer)).toEqual({ score: -1 });
      else expect(parseHintResponse(answer).accepted).toBe(false);
    }
    const heldout = Array.from({ length: 400 }, () => generateJudgeExample(random, { split: 'heldout', brokenReplyShare: 0.5 }).nextKind);
    expect(heldout).not.toContain('broken');
  });
});
