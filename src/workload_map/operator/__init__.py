"""The Karta operator: reconciles ``run.ai/v1alpha1 Karta`` objects (conditions, index labels,
GVK claims) and serves the admission webhooks. ``engine`` is a small kopf-like runtime (informers,
work queue, leader election, events, status patches); ``handlers`` holds the Karta logic;
``webhooks`` the TLS admission server; ``certs`` the CA and serving certificates."""
