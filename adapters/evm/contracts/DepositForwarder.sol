// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

/**
 * @title DepositForwarder
 * @notice The code a deposit address (an EOA derived from the service's HD key) delegates to with
 * an EIP-7702 authorization. It runs in the deposit account's context: `address(this)` is the
 * deposit address, `address(this).balance` its native balance.
 *
 * It can do exactly one thing: move the account's whole balance of one asset to COLLECTOR, fixed
 * in the code at deployment (an immutable is part of the runtime code, not of the account's
 * storage, so it holds whatever the delegating account's storage contains). So anyone may call
 * `sweep`: the caller picks only which asset moves and when, never where it goes. There is no
 * storage, owner, approval, initializer, arbitrary call, delegatecall or selfdestruct; a call
 * with any other selector reverts (no fallback), and plain native transfers succeed (`receive`),
 * so deposits keep arriving after delegation.
 *
 * Re-entrancy is harmless: there is no state to corrupt, and every path sends only to COLLECTOR.
 * A token that calls `sweep` again from inside its `transfer` makes the inner call send the
 * balance it reports to COLLECTOR; the outer transfer then either fails (the balance is gone:
 * the whole sweep reverts) or, for a token that lets it through, sends more to COLLECTOR. Only
 * the amount returned (the balance read before the transfer) can then be wrong, and only for
 * that misbehaving token. COLLECTOR re-entering from the native call is the same case.
 *
 * A collector per deployment: the forwarder's address depends on COLLECTOR (constructor argument
 * in the CREATE2 init code). Changing the collector means deploying another forwarder and
 * re-delegating the deposit accounts to it.
 */
contract DepositForwarder {
    using SafeERC20 for IERC20;

    /// @notice Where every swept unit goes. Never zero.
    address public immutable COLLECTOR;

    /// @dev The constructor was given the zero address.
    error ZeroCollector();
    /// @dev The native transfer to COLLECTOR failed (COLLECTOR is a contract that refused it).
    error NativeTransferFailed();

    constructor(address collector) {
        if (collector == address(0)) revert ZeroCollector();
        COLLECTOR = collector;
    }

    /**
     * @notice Sends this account's whole balance of `token` (address(0): the native coin) to
     * COLLECTOR and returns the amount sent (0: nothing to send, no transfer made; tokens that
     * refuse zero transfers are not bothered). ERC-20 goes through SafeERC20.safeTransfer, so
     * tokens without a return value (USDT) work and a `false` return reverts. A fee-on-transfer
     * token delivers less than the returned amount: it is what left this account.
     * Emits nothing itself (gas): the token's Transfer log, or the caller's log, tells the story.
     */
    function sweep(address token) external returns (uint256 amount) {
        if (token == address(0)) {
            amount = address(this).balance;
            if (amount != 0) {
                address collector = COLLECTOR;
                bool ok;
                // All gas forwarded, return data neither asked for nor copied.
                assembly ("memory-safe") {
                    ok := call(gas(), collector, amount, 0, 0, 0, 0)
                }
                if (!ok) revert NativeTransferFailed();
            }
        } else {
            amount = IERC20(token).balanceOf(address(this));
            if (amount != 0) IERC20(token).safeTransfer(COLLECTOR, amount);
        }
    }

    /// @notice Plain native deposits to the delegated address keep working.
    receive() external payable {}
}
