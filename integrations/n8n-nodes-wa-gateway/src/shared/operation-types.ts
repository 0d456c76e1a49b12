/** A field of an operation: a path, query or header parameter, or a property of its JSON body. */
export interface GatewayField {
  name: string;
  type: 'string' | 'number' | 'boolean' | 'options' | 'json';
  required: boolean;
  description: string;
  options?: string[];
}

/** One operation of the gateway's API, as the generator read it from the API document. */
export interface GatewayOperation {
  operationId: string;
  /** The document's tag: messages, numbers, groups… */
  resource: string;
  method: string;
  path: string;
  summary: string;
  /** The API key scope it needs. */
  scope: string;
  pathParameters: GatewayField[];
  queryParameters: GatewayField[];
  headerParameters: GatewayField[];
  /** The JSON body's fields, or null when the operation takes no body. */
  bodyFields: GatewayField[] | null;
}

export interface GatewayResource {
  name: string;
  description: string;
}
