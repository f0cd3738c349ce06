/**
 * The widget's stylesheet, adopted by its shadow root (a constructed stylesheet, so a strict
 * `style-src` does not refuse it, and the page's CSS never reaches inside). `--sb-accent` and
 * `--sb-on-accent` are set from the widget's colour.
 */
export const CSS = `
:host{all:initial}
*{box-sizing:border-box}
.root{--sb-bg:#fff;--sb-fg:#111827;--sb-muted:#4b5563;--sb-line:#d1d5db;--sb-bubble:#f3f4f6;--sb-focus:#1d4ed8;
font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans Arabic",Tahoma,Arial,sans-serif;color:var(--sb-fg);
-webkit-font-smoothing:antialiased;text-align:start}
.root.dark{--sb-bg:#111827;--sb-fg:#f9fafb;--sb-muted:#d1d5db;--sb-line:#4b5563;--sb-bubble:#1f2937;--sb-focus:#93c5fd}
@media (prefers-color-scheme:dark){.root.auto{--sb-bg:#111827;--sb-fg:#f9fafb;--sb-muted:#d1d5db;--sb-line:#4b5563;--sb-bubble:#1f2937;--sb-focus:#93c5fd}}
button,textarea{font:inherit;color:inherit}
:focus-visible{outline:3px solid var(--sb-focus);outline-offset:2px}
.launcher{position:fixed;bottom:20px;right:20px;z-index:2147483000;width:56px;height:56px;border-radius:50%;border:0;cursor:pointer;
background:var(--sb-accent);color:var(--sb-on-accent);box-shadow:0 4px 14px rgba(0,0,0,.25);display:flex;align-items:center;justify-content:center;padding:0}
.left .launcher{right:auto;left:20px}
.launcher svg{width:28px;height:28px;fill:currentColor}
.badge{position:absolute;top:2px;right:2px;width:14px;height:14px;border-radius:50%;background:#dc2626;border:2px solid #fff}
.panel{position:fixed;bottom:88px;right:20px;z-index:2147483000;width:380px;height:min(640px,calc(100vh - 110px));display:flex;flex-direction:column;
background:var(--sb-bg);color:var(--sb-fg);border:1px solid var(--sb-line);border-radius:14px;overflow:hidden;box-shadow:0 12px 40px rgba(0,0,0,.3)}
.left .panel{right:auto;left:20px}
.root.page{height:100%}
.page .panel{position:relative;inset:auto;width:100%;height:100%;min-height:360px;border-radius:0;box-shadow:none;z-index:auto}
@media (max-width:480px){.float .panel{inset:0;width:100%;height:100%;border-radius:0;border:0}}
header{display:flex;align-items:center;gap:8px;padding:12px 12px 12px 16px;background:var(--sb-accent);color:var(--sb-on-accent)}
header h2{flex:1;margin:0;font-size:16px;font-weight:600;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.x{border:0;background:transparent;color:inherit;width:36px;height:36px;border-radius:8px;cursor:pointer;font-size:22px;line-height:1;padding:0}
.x:focus-visible{outline-color:var(--sb-on-accent)}
.log{flex:1;overflow-y:auto;padding:16px;display:flex;flex-direction:column;gap:10px;overscroll-behavior:contain}
.msg{max-width:85%;padding:8px 12px;border-radius:12px;background:var(--sb-bubble);overflow-wrap:anywhere}
.msg.user{align-self:flex-end;background:var(--sb-accent);color:var(--sb-on-accent)}
.msg.human{border-inline-start:4px solid var(--sb-accent)}
.who{display:block;font-size:12px;font-weight:600;color:var(--sb-muted);margin-bottom:2px}
.user .who{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
.msg p,.msg ul,.msg ol,.msg pre,.msg blockquote{margin:0 0 6px}
.msg>div>:last-child{margin-bottom:0}
.msg ul,.msg ol{padding-inline-start:20px}
.msg pre{overflow-x:auto;padding:8px;border-radius:6px;background:rgba(0,0,0,.08);font-size:13px}
.msg code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}
.msg blockquote{padding-inline-start:8px;border-inline-start:3px solid var(--sb-line)}
.msg a{color:inherit;text-decoration:underline}
.cite{display:inline-block;min-width:1.4em;margin:0 2px;padding:0 4px;border-radius:6px;font-size:12px;text-align:center;
background:var(--sb-bg);border:1px solid var(--sb-line);text-decoration:none!important;vertical-align:1px}
.msg .sources{margin:6px 0 0;padding:0;list-style:none;font-size:13px}
.sources li{margin-top:2px}
.status{padding:6px 16px;font-size:13px;color:var(--sb-muted);border-top:1px solid var(--sb-line)}
.status:empty{padding:0;border:0}
.status.handoff{color:var(--sb-fg);font-weight:600}
form{display:flex;gap:8px;padding:10px;border-top:1px solid var(--sb-line);align-items:flex-end}
textarea{flex:1;resize:none;min-height:42px;max-height:120px;padding:10px;border:1px solid var(--sb-muted);border-radius:10px;background:var(--sb-bg)}
textarea::placeholder{color:var(--sb-muted);opacity:1}
.send{height:42px;padding:0 14px;border:0;border-radius:10px;background:var(--sb-accent);color:var(--sb-on-accent);cursor:pointer;font-weight:600}
.send:disabled{opacity:.6;cursor:default}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
`;
