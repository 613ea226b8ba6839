// The delivery thread's entry (alerts.ts starts a Worker here): a Worker does not inherit
// the TypeScript loader the process runs under (tsx), so this plain module registers it
// in the thread, then loads the thread's code, deliveryThread.ts.
import { register } from 'tsx/esm/api';

register();
await import('./deliveryThread.ts');
