/**
 * The workflows module's surface: the service and routes the container and the app mount, and
 * the routing types chat's `WorkflowRouter` port and the deployments' roll-out read.
 */
export { createWorkflowsService, DEFAULT_ROUTER_TIMEOUT_MS, type WorkflowsService } from './workflows.service.js';
export { workflowsRoutes } from './workflows.routes.js';
export { Workflow } from './workflows.schemas.js';
export type { RoutableWorkflow, RouteDecision, RouteInput } from './workflows.router.js';
export type { WorkflowStep } from './workflows.tables.js';
