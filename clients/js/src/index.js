// @impipe/client: the im-pipeline device client (see ../index.d.ts and docs/reference/js-client.md).
export { ImClient } from './client.js';
export { HttpApi, ImError, TokenSource } from './http.js';
export { MemoryStore, IndexedDbStore } from './stores.js';
export { Backoff } from './backoff.js';
export { NotificationError, base64UrlToBytes, disableNotifications, enableNotifications, notificationsSupported }
  from './push.js';
