// What a static file (a free snapshot, a history file) answers besides 200, on the hosts that route by the delivery
// policy (schemas/delivery.ts): the same list in every free and history operation of the OpenAPI document.
export const STATIC_FILE_RESPONSES = {
  '304': { $ref: '#/components/responses/NotModified' },
  '404': { $ref: '#/components/responses/NotFound' },
  '405': { $ref: '#/components/responses/MethodNotAllowed' },
} as const;
