import { describe, expect, it } from 'vitest';
import { erasureRequestOf, formatReceipt } from './data-command.js';

describe('clawrl data delete', () => {
  it('names exactly one target, and reads --before as an ISO date or epoch milliseconds', () => {
    expect(erasureRequestOf({ session: 's1' })).toEqual({ session: 's1' });
    expect(erasureRequestOf({ user: 'acme/alice' })).toEqual({ user: 'acme/alice' });
    expect(erasureRequestOf({ tenant: 'acme' })).toEqual({ tenant: 'acme' });
    expect(() => erasureRequestOf({ user: 'acme/alice', tenant: 'acme' })).toThrow(/exactly one/);
    expect(erasureRequestOf({ before: '2026-01-31' })).toEqual({ before: Date.parse('2026-01-31') });
    expect(erasureRequestOf({ before: '1700000000000' })).toEqual({ before: 1_700_000_000_000 });
    expect(() => erasureRequestOf({})).toThrow(/exactly one/);
    expect(() => erasureRequestOf({ session: 's1', user: 'alice' })).toThrow(/exactly one/);
    expect(() => erasureRequestOf({ before: 'last week' })).toThrow(/ISO date/);
  });

  it('prints what went and what happened to the versions', () => {
    const text = formatReceipt({
      target: { kind: 'session', sessionId: 's1' },
      erasedAt: 1,
      erased: { sessions: 1, turns: 3, messages: 5 },
      trainedOnErased: [2],
      affectedVersions: [2, 3],
      storageWiped: true,
      eventsErased: 4,
      action: { onDelete: 'retrain', activated: 1, retired: [2, 3], requeued: 6, retrainedVersion: 4 },
    });
    expect(text).toContain('erased session s1');
    expect(text).toContain('turns        3');
    expect(text).toContain('bus events   4');
    expect(text).toContain('serving moved back to version 1');
    expect(text).toContain('retired versions 2, 3');
    expect(text).toContain('6 remaining samples queued again; retrained version: 4');
  });
});
