import {
  NodeConnectionTypes,
  NodeOperationError,
  type IDataObject,
  type IExecuteFunctions,
  type IHttpRequestMethods,
  type INodeExecutionData,
  type INodeType,
  type INodeTypeDescription,
} from 'n8n-workflow';
import { callGateway, describeRefusal } from '../../shared/gateway-request';
import type { GatewayField, GatewayOperation } from '../../shared/operation-types';
import { operations, resources } from '../../shared/operations';
import { nodeProperties, topLevelFields } from './properties';

const byId = new Map(operations.map((operation) => [operation.operationId, operation]));

/**
 * The gateway's API as actions: one per operation of its API document, generated from it
 * (scripts/n8n-generate.ts), so a new operation is an action once the table is regenerated.
 */
export class WaGateway implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'wa-gateway',
    name: 'waGateway',
    icon: 'file:wa-gateway.svg',
    group: ['output'],
    version: 1,
    subtitle: '={{$parameter["operation"]}}',
    description: 'Send WhatsApp messages and manage numbers, groups, chats and webhooks through wa-gateway',
    defaults: { name: 'wa-gateway' },
    inputs: [NodeConnectionTypes.Main],
    outputs: [NodeConnectionTypes.Main],
    credentials: [{ name: 'waGatewayApi', required: true }],
    properties: nodeProperties(resources, operations),
  };

  async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
    const items = this.getInputData();
    const out: INodeExecutionData[] = [];
    for (let index = 0; index < items.length; index++) {
      const operationId = this.getNodeParameter('operation', index) as string;
      const operation = byId.get(operationId);
      if (operation === undefined) throw new NodeOperationError(this.getNode(), `Unknown operation ${operationId}`, { itemIndex: index });
      const answer = await callGateway(
        this,
        operation.method as IHttpRequestMethods,
        pathOf(this, operation, index),
        requestOf(this, operation, index),
      );
      if (answer.statusCode >= 300) {
        if (this.continueOnFail()) {
          out.push({ json: { status_code: answer.statusCode, ...answer.body }, pairedItem: { item: index } });
          continue;
        }
        throw new NodeOperationError(this.getNode(), describeRefusal(answer), {
          itemIndex: index,
          description: JSON.stringify(answer.body),
        });
      }
      out.push({ json: answer.body, pairedItem: { item: index } });
    }
    return [out];
  }
}

function pathOf(context: IExecuteFunctions, operation: GatewayOperation, index: number): string {
  return operation.path.replace(/\{([^}]+)\}/g, (_whole, name: string) =>
    encodeURIComponent(String(context.getNodeParameter(name, index))),
  );
}

function requestOf(context: IExecuteFunctions, operation: GatewayOperation, index: number) {
  const qs: IDataObject = {};
  const body: IDataObject = {};
  for (const { field, from } of topLevelFields(operation)) {
    if (from === 'path') continue;
    const value = fieldValue(context, field, context.getNodeParameter(field.name, index), index);
    if (!field.required && (value === '' || value === undefined)) continue;
    (from === 'query' ? qs : body)[field.name] = value;
  }
  // A collection the operation has not (no optional fields of that kind) reads as empty.
  const collection = (name: string) => context.getNodeParameter(name, index, {}) as IDataObject;
  const fieldsByName = new Map(
    [...operation.queryParameters, ...operation.headerParameters, ...(operation.bodyFields ?? [])].map((field) => [field.name, field]),
  );
  const gather = (name: string, into: IDataObject) => {
    for (const [key, given] of Object.entries(collection(name))) {
      const field = fieldsByName.get(key);
      if (field !== undefined) into[key] = fieldValue(context, field, given, index);
    }
  };
  const headers: IDataObject = {};
  gather('queryParameters', qs);
  gather('additionalBodyFields', body);
  gather('headerParameters', headers);
  return {
    qs,
    headers,
    ...(operation.bodyFields !== null && { body }),
  };
}

/** A field's value as the API takes it: a JSON field's text is parsed, so objects and arrays go as JSON. */
function fieldValue(context: IExecuteFunctions, field: GatewayField, given: unknown, index: number): IDataObject[string] {
  if (field.type !== 'json' || typeof given !== 'string') return given as IDataObject[string];
  if (given.trim() === '') return undefined;
  try {
    return JSON.parse(given) as IDataObject[string];
  } catch {
    throw new NodeOperationError(context.getNode(), `${field.name} is not valid JSON`, { itemIndex: index });
  }
}
