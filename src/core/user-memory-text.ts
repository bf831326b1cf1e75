/**
 * The text of a user's memory entries (`spec/user-memory.ts`): what is kept of a hint or a piece of
 * feedback (short: a memory is read on every request of its user), the normalized form entries are
 * deduplicated by, and the tenant a user belongs to. Pure.
 */

/**
 * The longest entry kept, in characters. A hint the judge accepts is 1–3 sentences (at most 600
 * characters); feedback text may be a page. An entry is a reminder, not the conversation: longer
 * text is cut at a word boundary.
 */
export const maximumMemoryEntryChars = 300;

/** Entries a user keeps by default (`--user-memory-entries`); adding past it drops the oldest. */
export const defaultMemoryEntriesPerUser = 30;

/** Whitespace collapsed and trimmed, cut to `maximumChars` at a word boundary with an ellipsis; null when nothing is left. */
export function memoryEntryTextOf(text: string, maximumChars = maximumMemoryEntryChars): string | null {
  const collapsed = text.replace(/\s+/g, ' ').trim();
  if (collapsed === '') return null;
  if (collapsed.length <= maximumChars) return collapsed;
  const cut = collapsed.slice(0, maximumChars - 1);
  const lastSpace = cut.lastIndexOf(' ');
  // A word boundary in the last third; a single very long word is cut where it is.
  return `${(lastSpace > maximumChars * (2 / 3) ? cut.slice(0, lastSpace) : cut).trimEnd()}…`;
}

/**
 * The form two entries are the same by: Unicode-normalized (NFKC), lower case, whitespace collapsed,
 * and the closing punctuation dropped, so "Be warmer." and "be  warmer" are one entry.
 */
export function normalizeMemoryText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[\s.!?;,…]+$/u, '');
}

/** The tenant of a user: `tenant/name` belongs to `tenant`; a user without a `/` is its tenant's one user, the tenant itself. */
export function tenantOfUser(user: string): string {
  const slash = user.indexOf('/');
  return slash === -1 ? user : user.slice(0, slash);
}
