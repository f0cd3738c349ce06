/**
 * The widget preview, framed by the deployments page (sandboxed): loads this service's
 * /widget.js with the deployment's key, exactly as the snippet does on a customer's page, and
 * says so when the script cannot be loaded. The fragment carries `key` and `v` (the snippet's
 * script version); the script comes from this origin, so the preview shows what this service serves.
 */
import './preview.css';

const params = new URLSearchParams(location.hash.replace(/^#/, ''));
const key = params.get('key') ?? '';
const version = params.get('v') ?? '';
const status = document.getElementById('preview-status')!;

if (!/^[A-Za-z0-9_-]{1,200}$/.test(key)) {
  status.textContent = 'No widget key was given to the preview.';
} else {
  const script = document.createElement('script');
  script.src = `/widget.js${version ? `?v=${encodeURIComponent(version)}` : ''}`;
  script.async = true;
  script.dataset.key = key;
  script.addEventListener('error', () => {
    status.textContent = 'The widget script could not be loaded from this service.';
    document.body.dataset.widget = 'failed';
  });
  script.addEventListener('load', () => {
    document.body.dataset.widget = 'loaded';
  });
  document.body.append(script);
}
