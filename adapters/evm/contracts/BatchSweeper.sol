// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.28;

/// @notice What a deposit address delegated to DepositForwarder answers.
interface IDepositForwarder {
    function sweep(address token) external returns (uint256 amount);
}

/**
 * @title BatchSweeper
 * @notice Calls `sweep(token)` on many deposit addresses (EOAs delegated to DepositForwarder by
 * EIP-7702) in one transaction, typically a type-4 transaction from the fee wallet that also
 * carries the authorizations of the addresses swept for the first time. Stateless, no owner,
 * holds nothing: anyone may use it, and it can only make delegated accounts run their own code,
 * which sends to their own COLLECTOR. (A batch someone else runs is their gas and our funds at
 * the collector.)
 *
 * One entry's failure never reverts the others: each entry ends in exactly one event, in entry
 * order, `Swept` (the call succeeded and answered one 32-byte word: the amount) or `SweepFailed`
 * with a reason:
 *  - the call reverted: its revert data (Error(string), a custom error, Panic, or empty),
 *    truncated to MAX_REASON_BYTES so a hostile token cannot make the batch pay for a huge log;
 *  - the call succeeded with no return data: the ABI encoding of `NoAnswer()` (4 bytes). A plain
 *    EOA, one not (or no longer) delegated, "succeeds" like this: no code answered;
 *  - the call succeeded with return data of another size: `UnexpectedAnswer(size)`: the account
 *    runs code that is not DepositForwarder.
 * `Swept` only says the account's code answered like the forwarder: a deposit key re-delegated
 * to other code answering 32 bytes would log one too. Check the account's delegate (eth_getCode)
 * before trusting it, and count the collector's receipts.
 *
 * Gas: each call gets exactly PER_CALL_GAS. Before each call, if the gas left could not give it
 * that much (EIP-150 keeps 1/64 back), the WHOLE transaction reverts with
 * NotEnoughGasForEntry(index): an entry never fails for want of gas at the batch's level, so the
 * lowest limit at which the batch succeeds (what eth_estimateGas finds) sweeps every entry that
 * can be swept. Entries whose own code needs more than PER_CALL_GAS fail the same at any limit.
 *
 * Entries are an array of (account, token) structs: ABI-encoded, the same calldata as two
 * parallel arrays less one offset and one length word, and no length mismatch to check.
 * token = address(0): the native coin.
 */
contract BatchSweeper {
    struct Entry {
        address account;
        address token;
    }

    /// @notice Gas given to each delegated account's `sweep`: 4x what an OpenZeppelin ERC-20's sweep takes at
    /// worst (~37k: cold token, new collector balance slot); ~10k warm, ~7k native. Headroom for heavier tokens.
    uint256 public constant PER_CALL_GAS = 150_000;

    /// @notice The longest revert data copied into a SweepFailed reason; longer is cut there.
    uint256 public constant MAX_REASON_BYTES = 256;

    /**
     * gasleft() required before an entry's call: enough that, after the CALL's own costs (a cold
     * account, its cold delegate: 2 x 2600, memory) and the 1/64 EIP-150 keeps, the callee gets
     * PER_CALL_GAS; what is kept back then also pays this entry's log (at most ~4.3k), so an
     * entry whose call was made always gets its event.
     */
    uint256 private constant GAS_BEFORE_CALL = PER_CALL_GAS + PER_CALL_GAS / 63 + 1 + 10_000;

    event Swept(address indexed account, address indexed token, uint256 amount);
    event SweepFailed(address indexed account, address indexed token, bytes reason);

    /// @notice Revert of the whole batch: the gas left could not give entry `index` PER_CALL_GAS.
    error NotEnoughGasForEntry(uint256 index);
    /// @notice SweepFailed reason marker: the call succeeded with no return data (no code answered: not delegated).
    error NoAnswer();
    /// @notice SweepFailed reason marker: the call succeeded with `size` bytes of return data, not 32.
    error UnexpectedAnswer(uint256 size);

    /**
     * @notice Sweeps every entry; see the contract's notice for the events. Equivalent to, per
     * entry, `account.call{gas: PER_CALL_GAS}(abi.encodeCall(IDepositForwarder.sweep, (token)))`
     * then one event; written in assembly to reuse one scratch area of memory for every entry
     * (memory never grows with the batch) and to copy at most MAX_REASON_BYTES of return data.
     */
    function sweep(Entry[] calldata entries) external {
        bytes4 selector = IDepositForwarder.sweep.selector;
        bytes32 sweptTopic = Swept.selector;
        bytes32 failedTopic = SweepFailed.selector;
        bytes4 noAnswer = NoAnswer.selector;
        bytes4 unexpectedAnswer = UnexpectedAnswer.selector;
        uint256 n = entries.length;
        for (uint256 i; i < n; ) {
            address account = entries[i].account;
            address token = entries[i].token;
            if (gasleft() < GAS_BEFORE_CALL) revert NotEnoughGasForEntry(i);
            assembly ("memory-safe") {
                // Scratch past the free memory pointer, never allocated: the same 0x160 bytes each entry.
                let p := mload(0x40)
                mstore(p, selector)
                mstore(add(p, 4), token)
                let ok := call(PER_CALL_GAS, account, 0, p, 0x24, 0, 0)
                let size := returndatasize()
                switch and(ok, eq(size, 0x20))
                case 1 {
                    returndatacopy(p, 0, 0x20)
                    log3(p, 0x20, sweptTopic, account, token)
                }
                default {
                    // reason: ABI-encoded bytes at p (offset word, length word, data zero-padded).
                    let data := add(p, 0x40)
                    let len := 4
                    switch ok
                    case 0 {
                        len := size
                        if gt(len, MAX_REASON_BYTES) { len := MAX_REASON_BYTES }
                        // Zero the last word the data lands in, so its padding is zeros.
                        mstore(add(data, and(len, not(31))), 0)
                        returndatacopy(data, 0, len)
                    }
                    default {
                        switch size
                        case 0 { mstore(data, noAnswer) }
                        default {
                            mstore(data, unexpectedAnswer)
                            mstore(add(data, 4), size)
                            mstore(add(data, 0x24), 0)
                            len := 0x24
                        }
                    }
                    mstore(p, 0x20)
                    mstore(add(p, 0x20), len)
                    log3(p, add(0x40, and(add(len, 31), not(31))), failedTopic, account, token)
                }
            }
            unchecked {
                ++i;
            }
        }
    }
}
