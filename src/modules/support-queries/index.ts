/**
 * The support-queries module's surface: the read-only family's service and routes (chat records
 * turns through the service), and the demo history the CLI seeds.
 */
export { seedDemo } from './support-queries.demo.js';
export { supportQueriesRoutes } from './support-queries.routes.js';
export { createSupportQueriesService, type SupportQueriesService } from './support-queries.service.js';
