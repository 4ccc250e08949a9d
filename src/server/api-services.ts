import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter, ServiceImpl } from "@connectrpc/connect";
import { AdminService } from "../../gen/flowlog/admin/v1/admin_service_pb.js";
import { LogsService } from "../../gen/flowlog/logs/v1/logs_service_pb.js";
import { DeliveriesService } from "../../gen/flowlog/notifications/v1/deliveries_service_pb.js";
import { NotificationsService } from "../../gen/flowlog/notifications/v1/notifications_service_pb.js";
import { TriggersService } from "../../gen/flowlog/workflows/v1/triggers_service_pb.js";
import { WorkflowsService } from "../../gen/flowlog/workflows/v1/workflows_service_pb.js";

/** Every service of the public API surface: what reflection lists and the REST gateway routes. */
export const apiServices: DescService[] = [
  LogsService,
  WorkflowsService,
  TriggersService,
  NotificationsService,
  DeliveriesService,
  AdminService,
];

/** Handlers per service; a method left out answers `unimplemented` on every protocol. */
export interface ApiImplementations {
  logs?: Partial<ServiceImpl<typeof LogsService>>;
  workflows?: Partial<ServiceImpl<typeof WorkflowsService>>;
  triggers?: Partial<ServiceImpl<typeof TriggersService>>;
  notifications?: Partial<ServiceImpl<typeof NotificationsService>>;
  deliveries?: Partial<ServiceImpl<typeof DeliveriesService>>;
  admin?: Partial<ServiceImpl<typeof AdminService>>;
}

/** The RPC surface, kept apart from the server that mounts it (style.md). */
export function registerApiServices(router: ConnectRouter, implementations: ApiImplementations): void {
  router.service(LogsService, implementations.logs ?? {});
  router.service(WorkflowsService, implementations.workflows ?? {});
  router.service(TriggersService, implementations.triggers ?? {});
  router.service(NotificationsService, implementations.notifications ?? {});
  router.service(DeliveriesService, implementations.deliveries ?? {});
  router.service(AdminService, implementations.admin ?? {});
}
