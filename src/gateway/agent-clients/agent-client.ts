/**
 * What clawrl knows of one agent client's traffic, found from the request alone (the clients send
 * no session or turn headers): the messages it adds to a conversation on its own, what it changes
 * in a reply it sends back, a session id it names, and its background calls, which are side turns
 * (recorded, never trained on). One file per client holds all of its rules, each with the version it
 * was seen in; `known-agent-clients.ts` combines them.
 */
import type { ChatMessage } from '../../spec/chat.js';

export interface AgentClient {
  name: string;
  /** A message the client adds on every turn that is environment, not the user's words. */
  isEnvironmentNoise?(message: ChatMessage): boolean;
  /** A reply's text with what the client strips when it sends the reply back taken out. */
  replyText?(content: string): string;
  /** The session the client names in the conversation, when it does. */
  sessionHint?(messages: readonly ChatMessage[]): string | null;
  /** Whether the request is one of the client's background calls. */
  isSideTurn?(messages: readonly ChatMessage[]): boolean;
}

/** The newest message that is not environment noise. */
export function newestOf(messages: readonly ChatMessage[], isNoise: (message: ChatMessage) => boolean): ChatMessage | undefined {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message !== undefined && !isNoise(message)) return message;
  }
  return undefined;
}
