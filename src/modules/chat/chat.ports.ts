/**
 * What the chat module needs from other modules, narrowed to the calls it makes. The container
 * passes the real services (knowledge, support queries, team notifications, deployments, speech);
 * each is optional so that chat works before (or without) the others.
 */
import type { Executor } from '../../db/database.js';
import type { SpeechToText } from '../../ports/speech.js';
import type { SupportQueriesService } from '../support-queries/index.js';
import type { AgentTool, AgentToolResult, ToolNotificationKind } from '../../ports/connectors.js';

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
  | 'ensureEndUser'
  | 'openForConversation'
  | 'recordAgentTurn'
  | 'recordSatisfaction'
  | 'close'
  | 'reassign'
  | 'turnRecord'
  | 'escalate'
  | 'resolveByPerson'
>;

export interface AgentNotifier {
  notify(
    executor: Executor,
    input: {
      companyId: string;
      senderId: null;
      notificationType: 'agent_action' | ToolNotificationKind;
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

export type { AgentTool, AgentToolResult };

/** A workflow as a turn routes it (the workflows module's routable record). */
export interface ServedWorkflow {
  id: string;
  name: string;
  default_agent_id: string;
  router: string;
  steps: readonly { name: string; agent_id: string }[];
}

/**
 * Workflows behind agent keys (the workflows module implements it): the company's workflow with
 * the key's id, and the step that answers a question (sticky to `currentAgentId`).
 */
export interface WorkflowRouter {
  find(companyId: string, workflowId: string): Promise<ServedWorkflow | undefined>;
  route(
    workflow: ServedWorkflow,
    input: { query: string; currentAgentId: string | null; signal?: AbortSignal },
  ): Promise<{ agentId: string; step: string | null; reason: string }>;
}
