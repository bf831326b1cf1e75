/**
 * The fields of a wire message, content block or item that a protocol adapter does not read, kept
 * on the domain message for the record (`ChatMessage.providerFields`): a turn keeps what the client
 * sent, even what clawrl has no use for.
 */
import type { ChatMessage } from '../../spec/chat.js';

export function keepUnreadFields(message: ChatMessage, from: string, wire: object, read: readonly string[]): void {
  const unread = Object.entries(wire).filter(([key, value]) => !read.includes(key) && value !== undefined && value !== null);
  if (unread.length === 0) return;
  (message.providerFields ??= []).push({ from, ...Object.fromEntries(unread) });
}
