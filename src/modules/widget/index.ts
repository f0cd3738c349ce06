/** createWidgetModule(deps) → the web widget: its service, turns, events, script and config rules. */
export { widgetKeyRoutes, widgetPublicRoutes, widgetScriptRoute } from './widget.routes.js';
export type { WidgetRecord } from './widget.service.js';
export { createWidgetModule, type WidgetModule, type WidgetModuleDeps } from './widget.module.js';
