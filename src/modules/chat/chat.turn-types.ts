/** What a prepared chat turn carries and what a finished one returns (chat.turns.ts runs them; chat.turn-write.ts writes them). */
import type { ChatCaller } from '../../http/caller.js';
import type { LlmMessage } from '../../ports/llm.js';
import type { AgentRow } from '../agents/index.js';
import type { KbPassage } from './chat.kb-responder.js';
import type * as repo from './chat.repo.js';
import type { TurnOptions, TurnUsage } from './chat.runtime.js';
import type { AudioPart } from './chat.schemas.js';
import type { CustomerHandoffStatus } from './chat.turn-hold.js';
import type { Handoff } from './chat.workflow-route.js';

export interface PreparedTurn {
  /** The turn's id, also the id of its stored answer (a resumed stream finds it by this id). */
  id: string;
  caller: ChatCaller;
  agent: AgentRow;
  conversation: repo.ConversationRow;
  /** Writes the conversation row if it is new (once; later calls wait for the same write). */
  persist(): Promise<void>;
  /**
   * A new conversation's row written by `write` instead (a statement that writes it with more),
   * which `persist` then waits for; null once its write started. Absent for a stored conversation.
   */
  writeWith?: (write: (row: repo.NewConversation) => Promise<void>) => Promise<void> | null;
  deploymentId: string | null;
  history: LlmMessage[];
  query: string;
  audio: AudioPart | null;
  startedAt: number;
  /** Knowledge search started while the turn was prepared (text queries). */
  retrieval: Promise<KbPassage[]> | null;
  /**
   * The turn's one abort: its knowledge search, model call and tools stop on it. `run` aborts it
   * when the caller's signal does or at the time limit; a streamed turn's hub aborts it directly
   * (chat.stream-hub.ts). One controller rather than one per purpose: an AbortSignal is ≈ 0.8 KiB
   * of heap (1.2 with a timeout, 1.3 more for `AbortSignal.any`), held as long as the turn.
   */
  abort: AbortController;
  /** The caller's sampling settings (OpenAI-compatible endpoint), honoured by model agents. */
  options: TurnOptions;
  /** A workflow moved the conversation to this turn's agent: said (a `chunk`) before the answer. */
  handoff: Handoff | null;
  /** The conversation is a person's (or waits for one) as prepared: the message is stored with no agent turn. */
  held: boolean;
}

export interface TurnResult {
  conversation_id: string;
  agent_response_text: string;
  response_time_ms: number;
  was_resolved: boolean;
  message_id: string | null;
  finish_reason: 'stop' | 'aborted' | 'error';
  /** Provider-counted tokens, when the provider reported them. */
  usage: TurnUsage | null;
  /** The message went to a person (no agent turn): what the customer is told. */
  held?: { status: CustomerHandoffStatus };
}
