// A publisher's id, the slug in `/p/<id>/`: checked by the config schema, and by `emi publisher` before it touches a
// ledger, without loading the schema's packages.
export const PUBLISHER_ID = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;

export const PUBLISHER_ID_RULE = 'a slug: a-z, 0-9 and inner hyphens, 1-32 characters';
