// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.28;

interface ISweepable {
    function sweep(address token) external returns (uint256 amount);
}

/**
 * TEST ONLY. Tries to get funds out of a delegated deposit address: calls its `sweep` (the funds
 * must still go to the forwarder's COLLECTOR, never here), and sends it arbitrary calldata,
 * reporting which calls succeeded. Accepts native coins, so any that reached it would show.
 */
contract Attacker {
    event Tried(uint256 index, bool ok, bytes returned);

    function sweepDirect(address account, address token) external returns (uint256) {
        return ISweepable(account).sweep(token);
    }

    function tryCalls(address account, bytes[] calldata payloads) external returns (bool[] memory oks) {
        oks = new bool[](payloads.length);
        for (uint256 i; i < payloads.length; ++i) {
            (bool ok, bytes memory returned) = account.call(payloads[i]);
            oks[i] = ok;
            emit Tried(i, ok, returned);
        }
    }

    receive() external payable {}
}
