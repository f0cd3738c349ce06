/**
 * The support-queries module's surface: the read-only family's service and routes (chat records
 * turns through the service), and the demo history the CLI seeds.
 */
export { seedDemo } from './support-queries.demo.js';
export { supportQueriesRoutes } from './support-queries.routes.js';
export { createSupportQueriesService, type SupportQueriesService } from './support-queries.service.js';
export { createRollupFolder, type RollupFolder } from './support-queries.folder.js';
export { classifyQueryType } from './support-queries.classify.js';
export { QUERY_TYPES, type QueryType } from './support-queries.tables.js';
