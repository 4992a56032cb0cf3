// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/**
 * TEST ONLY. A malicious ERC-20: when a contract (a delegated deposit address running
 * DepositForwarder) calls `transfer`, it first calls back into that account, once: `sweep` of
 * itself again, `sweep` of the native coin, `sweep` of `victim` (another token the account
 * holds), and an `execute(attacker, 1, "")` that a wallet-like delegate might have. Then it does
 * the transfer, either before the call-backs (`reenterBefore` false) or after them (true, so the
 * inner sweep empties the balance first). Each call-back's success is logged.
 */
contract ReentrantToken is ERC20 {
    bool public immutable reenterBefore;
    address public immutable victim;
    address public immutable attacker;
    bool private entered;

    event Reentered(bool sweptSelf, bool sweptNative, bool sweptVictim, bool executed);

    constructor(bool reenterBefore_, address victim_, address attacker_) ERC20("Reentrant", "RE") {
        reenterBefore = reenterBefore_;
        victim = victim_;
        attacker = attacker_;
    }

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function transfer(address to, uint256 amount) public override returns (bool) {
        if (!reenterBefore) {
            super.transfer(to, amount);
            _callBack();
            return true;
        }
        _callBack();
        return super.transfer(to, amount);
    }

    function _callBack() private {
        if (entered || msg.sender.code.length == 0) return;
        entered = true;
        (bool a, ) = msg.sender.call(abi.encodeWithSignature("sweep(address)", address(this)));
        (bool b, ) = msg.sender.call(abi.encodeWithSignature("sweep(address)", address(0)));
        (bool c, ) = msg.sender.call(abi.encodeWithSignature("sweep(address)", victim));
        (bool d, ) = msg.sender.call(abi.encodeWithSignature("execute(address,uint256,bytes)", attacker, 1, ""));
        emit Reentered(a, b, c, d);
        entered = false;
    }
}
