/** What the MCP server is given by the container: the reads and the chat turn it speaks for. */
import type { Db } from '../../db/database.js';
import type { ChatModule } from '../chat/index.js';
import type { KnowledgeService } from '../knowledge/index.js';
import type { SupportQueriesService } from '../support-queries/index.js';

export interface McpDeps {
  db: Db;
  knowledge: Pick<KnowledgeService, 'search' | 'getDocument' | 'getCollection'>;
  supportQueries: Pick<SupportQueriesService, 'list' | 'get'>;
  turns: Pick<ChatModule['turns'], 'prepare' | 'run'>;
  /** The collections an agent answers from (none: all of the company's), undefined when there is no such agent. */
  knowledgeScopeOf(companyId: string, agentId: string): Promise<string[] | undefined>;
  collectionExists(companyId: string, collectionId: string): Promise<boolean>;
  log: { warn(obj: object, msg: string): void };
}
