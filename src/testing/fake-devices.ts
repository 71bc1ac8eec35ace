/**
 * FakeDevices: the page's audio devices, scripted (the session's
 * DevicesPort): a test plugs and unplugs inputs and outputs, and the session
 * sees a `devicechange` as it would from navigator.mediaDevices. A
 * FakeMicrophone given these devices opens only the inputs listed.
 * Thread: main.
 */
import { Emitter, type DeviceList, type DevicesPort } from "../advanced.js";
import type { AudioDevice } from "../index.js";

export interface FakeDevicesOptions {
  /** Input deviceIds present at first. Default: ["default"]. */
  inputs?: string[];
  /** Output deviceIds present at first. Default: ["default"]. */
  outputs?: string[];
}

export class FakeDevices implements DevicesPort {
  protected readonly emitter = new Emitter<{ change: undefined }>();
  #inputs: string[];
  #outputs: string[];

  constructor(options: FakeDevicesOptions = {}) {
    this.#inputs = [...(options.inputs ?? ["default"])];
    this.#outputs = [...(options.outputs ?? ["default"])];
  }

  async list(): Promise<DeviceList> {
    const info = (deviceId: string): AudioDevice => ({ deviceId, groupId: `group-${deviceId}`, label: `Fake ${deviceId}` });
    return { inputs: this.#inputs.map(info), outputs: this.#outputs.map(info) };
  }

  on(_name: "change", fn: () => void): () => void {
    return this.emitter.on("change", fn);
  }

  /** Whether input `deviceId` is plugged in (the default always is). */
  hasInput(deviceId: string | undefined): boolean {
    return deviceId === undefined || this.#inputs.includes(deviceId);
  }

  hasOutput(deviceId: string): boolean {
    return deviceId === "" || this.#outputs.includes(deviceId);
  }

  /** Plugs a device in; emits `change`. */
  plug(kind: "input" | "output", deviceId: string): void {
    const list = kind === "input" ? this.#inputs : this.#outputs;
    if (!list.includes(deviceId)) list.push(deviceId);
    this.emitter.emit("change", undefined);
  }

  /** Unplugs a device; emits `change`. */
  unplug(kind: "input" | "output", deviceId: string): void {
    if (kind === "input") this.#inputs = this.#inputs.filter((d) => d !== deviceId);
    else this.#outputs = this.#outputs.filter((d) => d !== deviceId);
    this.emitter.emit("change", undefined);
  }
}
