import LabControl

/// One process of a real run as the launcher holds it: the process (a child here, or a role on a host over ssh) and
/// the control client that speaks to it. A pool's devices are `LabRun.poolDevices`; its crash points armed and not
/// yet fired are `armedCrashes` (both shared with the simulation through `TopologyRunner`).
struct RunMember {
    let process: any LabProcess
    let control: ControlClient
}
