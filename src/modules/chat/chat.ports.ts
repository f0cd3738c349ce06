/**
 * What the chat module needs from other modules, narrowed to the calls it makes. The container
 * passes the real services (knowledge, support queries, team notifications, deployments, speech);
 * each is optional so that chat works before (or without) the others.
 */
import type { Executor } from '../../db/database.js';
import type { SpeechToText } from '../../ports/speech.js';
import type { SupportQueriesService } from '../support-queries/index.js';

export interface KnowledgeHit {
  chunk_id: string;
  text: string;
  document_id: string;
  title: string;
  collection_id: string | null;
  score: number;
}

export interface KnowledgeSearch {
  search(
    companyId: string,
    input: { query: string; topK?: number; collectionIds?: string[]; signal?: AbortSignal },
  ): Promise<{ results: KnowledgeHit[] }>;
}

/** The support-queries calls a chat turn makes, inside its transaction. */
export type SupportRecorder = Pick<
  SupportQueriesService,
  'ensureEndUser' | 'openForConversation' | 'recordAgentTurn' | 'recordSatisfaction' | 'close'
>;

export interface AgentNotifier {
  notify(
    executor: Executor,
    input: {
      companyId: string;
      senderId: null;
      notificationType: 'agent_action' | ToolNotification;
      category: 'agent';
      priority: 'low' | 'medium' | 'high' | 'urgent';
      title: string;
      message: string;
      metadata: Record<string, string>;
    },
  ): Promise<unknown>;
}

export interface ChatDeployments {
  /** The active deployment of the agent for this channel and region; AppError 404 / 409 otherwise. */
  resolveForChat(companyId: string, agentId: string, channel: string, regionSlug: string): Promise<{ id: string }>;
  logEvent(deploymentId: string, level: 'info' | 'warning' | 'error', message: string): Promise<void>;
}

/** Speech to text for audio turns, or why there is none (said in the 503). */
export interface ChatSpeech {
  stt: SpeechToText | null;
  reason: string | null;
}

/** The team-notification type a tool call writes (DESIGN §10). */
export type ToolNotification = 'email_sent' | 'slack_message' | 'api_call' | 'tool_usage';

/** One tool an agent may call, as offered to the model (its secrets stay with the integration). */
export interface AgentTool {
  /** Unique among the agent's tools, provider-safe: [a-zA-Z0-9_-], at most 64 characters. */
  name: string;
  description: string;
  /** JSON schema of the input. */
  inputSchema: Record<string, unknown>;
  integrationId: string;
  /** The integration's type (`slack`) and the connector's tool (`post_message`). */
  integrationType: string;
  tool: string;
  notification: ToolNotification;
}

/** What a tool call gave: data for the model or the rule and one line for people; or why it failed. */
export type AgentToolResult =
  { ok: true; summary: string; data: unknown } | { ok: false; summary: string; retryable: boolean };

/** The tools of an agent's integrations and their calls (the integrations module implements it). */
export interface AgentTools {
  /** The tools of the agent's active integrations (its integration_ids and those linked to it). */
  forAgent(companyId: string, agent: { id: string; integration_ids: readonly string[] }): Promise<AgentTool[]>;
  /**
   * Runs one call: the input checked against the tool's schema, the integration's secrets opened
   * for the call only, bounded by the integration time limit and `signal`. Never throws for a
   * vendor's failure (`ok: false`, with words that hold no secret).
   */
  run(
    companyId: string,
    tool: AgentTool,
    input: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<AgentToolResult>;
}
