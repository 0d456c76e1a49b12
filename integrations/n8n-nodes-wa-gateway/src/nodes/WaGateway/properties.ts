import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';
import type { GatewayField, GatewayOperation, GatewayResource } from '../../shared/operation-types';

/**
 * The node's fields, made from the generated table of operations (shared/operations.ts): a
 * resource for each of the document's tags, an operation for each of its operations, and for each
 * operation its path parameters, required query parameters and body fields (those a `oneOf`
 * branch requires too, such as to_phone or to_group) as fields of their own, the rest in the
 * collections "Query Parameters", "Additional Body Fields" and "Headers".
 */
export function nodeProperties(resources: GatewayResource[], operations: GatewayOperation[]): INodeProperties[] {
  return [
    {
      displayName: 'Resource',
      name: 'resource',
      type: 'options',
      noDataExpression: true,
      options: resources.map((resource) => ({ name: titleOf(resource.name), value: resource.name, description: resource.description })),
      default: resources[0]?.name ?? '',
    },
    ...resources.map((resource) => operationChoice(resource, operations)),
    ...operations.flatMap(operationFields),
  ];
}

function operationChoice(resource: GatewayResource, operations: GatewayOperation[]): INodeProperties {
  const options: INodePropertyOptions[] = operations
    .filter((operation) => operation.resource === resource.name)
    .map((operation) => ({
      name: titleOf(operation.operationId),
      value: operation.operationId,
      action: operation.summary,
      description: `${operation.method} ${operation.path} (scope: ${operation.scope})`,
    }));
  return {
    displayName: 'Operation',
    name: 'operation',
    type: 'options',
    noDataExpression: true,
    displayOptions: { show: { resource: [resource.name] } },
    options,
    default: options[0]?.value ?? '',
  };
}

/** Fields shown on their own: path parameters, required query parameters, and the body's leading fields. */
export function topLevelFields(operation: GatewayOperation): { field: GatewayField; from: 'path' | 'query' | 'body' }[] {
  return [
    ...operation.pathParameters.map((field) => ({ field, from: 'path' as const })),
    ...operation.queryParameters.filter((field) => field.required).map((field) => ({ field, from: 'query' as const })),
    ...leadingBodyFields(operation).map((field) => ({ field, from: 'body' as const })),
  ];
}

/** The body fields shown on their own: the required ones, then those only one of two alternatives needs (the generator puts them first). */
export function leadingBodyFields(operation: GatewayOperation): GatewayField[] {
  const fields = operation.bodyFields ?? [];
  return fields.filter((field) => field.required || ONE_OF_TWO.has(field.name));
}

/** Fields the gateway takes one of: shown on their own, sent only when filled in. */
const ONE_OF_TWO = new Set(['to_phone', 'to_group']);

function operationFields(operation: GatewayOperation): INodeProperties[] {
  const show = { resource: [operation.resource], operation: [operation.operationId] };
  const own = topLevelFields(operation).map(({ field }) => ({ ...propertyOf(field), displayOptions: { show } }));
  const leading = new Set(leadingBodyFields(operation).map((field) => field.name));
  const collections: [string, string, GatewayField[]][] = [
    ['queryParameters', 'Query Parameters', operation.queryParameters.filter((field) => !field.required)],
    ['additionalBodyFields', 'Additional Body Fields', (operation.bodyFields ?? []).filter((field) => !leading.has(field.name))],
    ['headerParameters', 'Headers', operation.headerParameters],
  ];
  return [
    ...own,
    ...collections
      .filter(([, , fields]) => fields.length > 0)
      .map(([name, displayName, fields]) => ({
        displayName,
        name,
        type: 'collection' as const,
        placeholder: 'Add Field',
        default: {},
        displayOptions: { show },
        options: fields.map((field) => ({ ...propertyOf(field), required: false })),
      })),
  ];
}

function propertyOf(field: GatewayField): INodeProperties {
  const common = { displayName: field.name, name: field.name, description: field.description, required: field.required };
  switch (field.type) {
    case 'number':
      return { ...common, type: 'number', default: 0 };
    case 'boolean':
      return { ...common, type: 'boolean', default: false };
    case 'options':
      return {
        ...common,
        type: 'options',
        options: (field.options ?? []).map((value) => ({ name: value, value })),
        default: field.options?.[0] ?? '',
      };
    case 'json':
      return { ...common, type: 'json', default: '' };
    default:
      return { ...common, type: 'string', default: '' };
  }
}

/** sendMessage → Send Message; contacts → Contacts. */
function titleOf(name: string): string {
  const words = name.replace(/([a-z])([A-Z])/g, '$1 $2').split(/[\s_]+/);
  return words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join(' ');
}
