// The parts of a browser enableNotifications uses, in memory: navigator.serviceWorker (a registration whose worker
// activates a tick later), its PushManager (subscriptions with an endpoint under https://push.test/) and
// Notification's permission. Pass it as `env`.

class FakeSubscription {
  constructor(manager, key) {
    this.manager = manager;
    this.endpoint = 'https://push.test/sub/' + ++manager.created;
    this.options = { userVisibleOnly: true, applicationServerKey: key.buffer.slice(0) };
  }

  toJSON() {
    return { endpoint: this.endpoint, expirationTime: null, keys: { p256dh: 'BPk-p256dh', auth: 'auth-16' } };
  }

  async unsubscribe() {
    if (this.manager.current === this) {
      this.manager.current = null;
    }
    return true;
  }
}

class FakePushManager {
  constructor() {
    this.current = null;
    this.created = 0;
    this.subscribeCalls = [];
  }

  async getSubscription() {
    return this.current;
  }

  async subscribe(options) {
    this.subscribeCalls.push(options);
    if (!(options.applicationServerKey instanceof Uint8Array)) {
      throw new TypeError('applicationServerKey must be bytes');
    }
    if (this.current) {
      throw new Error('InvalidStateError: subscribed with another applicationServerKey');
    }
    this.current = new FakeSubscription(this, options.applicationServerKey);
    return this.current;
  }
}

class FakeWorker extends EventTarget {
  constructor() {
    super();
    this.state = 'installing';
  }

  become(state) {
    this.state = state;
    this.dispatchEvent(new Event('statechange'));
  }
}

/**
 * @param {{permission?: 'default'|'granted'|'denied', answer?: 'granted'|'denied'|'default', failInstall?: boolean}}
 *     options the permission now, and what the prompt answers
 */
export function fakeBrowser({ permission = 'default', answer = 'granted', failInstall = false } = {}) {
  const registrations = new Map(); // scope -> registration
  const env = {
    prompts: 0,
    registered: [],
    PushManager: FakePushManager,
    Notification: {
      permission,
      async requestPermission() {
        env.prompts++;
        env.Notification.permission = answer;
        return answer;
      },
    },
    navigator: {
      serviceWorker: {
        async register(url, options) {
          env.registered.push(url);
          const scope = options?.scope ?? url.slice(0, url.lastIndexOf('/') + 1);
          let registration = registrations.get(scope);
          if (!registration) {
            const worker = new FakeWorker();
            registration = { scope, active: null, installing: worker, waiting: null,
              pushManager: new FakePushManager() };
            registrations.set(scope, registration);
            setTimeout(() => {
              if (failInstall) {
                worker.become('redundant');
                return;
              }
              registration.installing = null;
              registration.active = worker;
              worker.become('activating');
              worker.become('activated');
            }, 1);
          }
          return registration;
        },
        async getRegistration(clientUrl = '/') {
          const scopes = [...registrations.keys()].filter((s) => clientUrl.startsWith(s));
          return registrations.get(scopes.sort((a, b) => b.length - a.length)[0]);
        },
      },
    },
    /** The registration of a scope (default '/'), to look at its subscription. */
    registration(scope = '/') {
      return registrations.get(scope);
    },
  };
  return env;
}
